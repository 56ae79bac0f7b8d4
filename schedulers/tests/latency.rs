//! Latency-hiding futures (`Scope::latency_future`): that the fiber runtimes hide the latency
//! (a worker computes while the others' waits pass), that no wake-up is lost between the I/O
//! thread and the workers (random latencies, random touches, random nesting), that a panic in
//! an I/O future reaches its toucher and the run, that a real socket wait works, and that a
//! pool shuts down cleanly with waits in flight. The classic runtimes (`serial`, `rayon`) and
//! the async front-end are checked for the same values.
//!
//! `LATENCY_STRESS_RUNS=n` sets the number of random computations per runtime (default 60).

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use stealbench_schedulers::abp::Abp;
use stealbench_schedulers::fibril::Fibril;
use stealbench_schedulers::io::sleep;
use stealbench_schedulers::prows::Prows;
use stealbench_schedulers::rayon::RayonPool;
use stealbench_schedulers::serial::Serial;
use stealbench_schedulers::tokio::TokioPool;
use stealbench_schedulers::*;

mod common;
use common::{leaf, mix, splitmix};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// 2 workers with `placement` (the others' only one is the default, `Placement::Paper`).
fn two(placement: Placement) -> PoolConfig {
    PoolConfig {
        placement,
        ..PoolConfig::with_workers(2)
    }
}

/// The arm's name: the runtime's, and the placement where it is not the default.
fn arm<S: Scheduler>(placement: Placement) -> String {
    if placement == Placement::default() {
        S::NAME.to_string()
    } else {
        format!("{}/placement={placement}", S::NAME)
    }
}

/// `k` items, each a latency future of `wait` touched at once, then `spin` of computing; the
/// items spread over the workers by a join tree. Returns the sum of the futures' values.
fn items<W: Futures>(w: &W, lo: u64, hi: u64, wait: Duration, spin: Duration) -> u64 {
    if hi - lo == 1 {
        let v = w.scope(|s, w| {
            let h = w.latency_future(s, move || async move {
                sleep(wait).await;
                lo
            });
            h.get(w)
        });
        let t = Instant::now();
        while t.elapsed() < spin {
            std::hint::spin_loop();
        }
        return v;
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = w.join(
        |w| items(w, lo, mid, wait, spin),
        |w| items(w, mid, hi, wait, spin),
    );
    a + b
}

/// 40 items of 50 ms latency and 1 ms of work on 2 workers: classic would take 40 x 51 / 2 ms
/// = 1.02 s; hiding, about 50 ms + 40 x 1 / 2 ms = 70 ms. Allow 5x that for a loaded machine.
fn hides_latency<S: FutureForkJoin>(placement: Placement) {
    let name = arm::<S>(placement);
    let pool = S::start(&two(placement)).unwrap();
    let t = Instant::now();
    let v = pool.run(|w| items(w, 0, 40, ms(50), ms(1)));
    let took = t.elapsed();
    assert_eq!(v, 40 * 39 / 2);
    assert!(
        took < Duration::from_millis(400),
        "{name}: 40 waits of 50 ms on 2 workers took {took:?}"
    );
    let st = pool.stats();
    assert_eq!(st.extra("latency_futures"), Some(40), "{name}");
    assert_eq!(st.extra("latency_waits"), Some(40), "{name}");
}

#[test]
fn fiber_runtimes_hide_latency() {
    hides_latency::<Prows>(Placement::Paper);
    hides_latency::<Prows>(Placement::Artifact);
    hides_latency::<Abp>(Placement::Paper);
    hides_latency::<Fibril>(Placement::Paper);
}

/// On `prows` a touch that waits suspends the whole deque (Figure 3.1), and the I/O thread's
/// put makes it resumable.
#[test]
fn prows_suspends_deques_at_latency_touches() {
    let pool = Prows::start(&PoolConfig::with_workers(2)).unwrap();
    pool.run(|w| items(w, 0, 16, ms(5), Duration::ZERO));
    let st = pool.stats();
    assert!(st.extra("deque_suspensions").unwrap() >= 1, "{st:?}");
    assert!(st.extra("latency_readied").unwrap() >= 1, "{st:?}");
}

/// The classic runtimes block on the future: same values, no hiding (checked loosely: at
/// least the waits of one worker's share).
#[test]
fn classic_runtimes_block_and_agree() {
    fn classic<S: FutureForkJoin>(p: usize) {
        let pool = S::start(&PoolConfig::with_workers(p)).unwrap();
        let t = Instant::now();
        let v = pool.run(|w| items(w, 0, 8, ms(10), Duration::ZERO));
        assert_eq!(v, 28, "{}", S::NAME);
        let floor = ms(10 * 8 / p as u64);
        assert!(t.elapsed() >= floor, "{}: {:?}", S::NAME, t.elapsed());
    }
    classic::<Serial>(1);
    classic::<RayonPool>(2);
}

/// A future that is done at its first poll gives a ready handle: no I/O thread work.
#[test]
fn a_ready_future_is_not_handed_to_the_io_thread() {
    let pool = Abp::start(&PoolConfig::with_workers(2)).unwrap();
    let v = pool.run(|w| w.scope(|s, w| w.latency_future(s, || async { 5u32 }).get(w)));
    assert_eq!(v, 5);
    assert_eq!(pool.stats().extra("latency_waits"), Some(0));
}

/// A random computation: joins, latency futures with random latencies (0 to 3 ms), touched
/// at once, later, by another task, or never (the scope waits for them), nested in each
/// other's continuations. Its value depends on the seed only.
fn node<W: Futures>(w: &W, seed: u64, depth: u32) -> u64 {
    let r = splitmix(seed);
    if depth == 0 || r.is_multiple_of(5) {
        return leaf(seed);
    }
    let d = depth - 1;
    let s = |i: u64| splitmix(seed.wrapping_add(i.wrapping_mul(0x1234_5678_9ABC_DEF1)));
    let lat = |x: u64| Duration::from_micros(x % 3000);
    match (r >> 8) % 5 {
        0 => {
            let (a, b) = w.join(|w| node(w, s(1), d), |w| node(w, s(2), d));
            mix(a, b)
        }
        // Touched at once.
        1 => w.scope(|sc, w| {
            let (v, wait) = (s(1), lat(s(2)));
            let h = w.latency_future(sc, move || async move {
                sleep(wait).await;
                v
            });
            mix(h.get(w), node(w, s(3), d))
        }),
        // Touched after some work of its own.
        2 => w.scope(|sc, w| {
            let (v, wait) = (s(1), lat(s(2)));
            let h = w.latency_future(sc, move || async move {
                sleep(wait).await;
                v
            });
            let y = node(w, s(3), d);
            mix(y, h.get(w))
        }),
        // Touched by another task (a future task of the same scope).
        3 => w.scope(|sc, w| {
            let (v, wait) = (s(1), lat(s(2)));
            let h = w.latency_future(sc, move || async move {
                sleep(wait).await;
                v
            });
            let other = w.future(sc, move |_, w| mix(h.get(w), node(w, s(4), d)));
            let y = node(w, s(3), d);
            mix(other.get(w), y)
        }),
        // Never touched: the scope's end waits for it.
        _ => w.scope(|sc, w| {
            let wait = lat(s(2));
            let _ = w.latency_future(sc, move || async move {
                sleep(wait).await;
            });
            node(w, s(3), d)
        }),
    }
}

fn stress_runs() -> u64 {
    std::env::var("LATENCY_STRESS_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60)
}

/// Every random computation gives the serial value; a lost wake-up would hang (the watchdog
/// fails the test after 60 s).
fn stress<S: FutureForkJoin>(placement: Placement) {
    let name = arm::<S>(placement);
    let serial = Serial::start(&PoolConfig::with_workers(1)).unwrap();
    let pool = S::start(&two(placement)).unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let watchdog = {
        let name = name.clone();
        std::thread::spawn(move || {
            if rx.recv_timeout(Duration::from_secs(60)).is_err() {
                eprintln!("{name}: a latency stress run hung (lost wake-up?)");
                std::process::abort();
            }
        })
    };
    for i in 0..stress_runs() {
        let seed = splitmix(i ^ 0x5EED);
        let want = serial.run(|w| node(w, seed, 7));
        let got = pool.run(|w| node(w, seed, 7));
        assert_eq!(got, want, "{name} seed {seed:#x}");
    }
    let _ = tx.send(());
    watchdog.join().unwrap();
    // The waits went through the I/O thread, and every suspended fiber came back and ended.
    assert!(pool.stats().extra("latency_waits").unwrap() > stress_runs());
    let t = Instant::now();
    while pool.stats().gauge("stacks_in_use") != Some(0) {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{name}: fiber stacks leaked"
        );
        std::thread::sleep(ms(1));
    }
}

#[test]
fn no_lost_wakeup_prows() {
    stress::<Prows>(Placement::Paper);
}

#[test]
fn no_lost_wakeup_abp() {
    stress::<Abp>(Placement::Paper);
}

#[test]
fn no_lost_wakeup_prows_artifact_and_fibril() {
    stress::<Prows>(Placement::Artifact);
    stress::<Fibril>(Placement::Paper);
}

/// A panic in an I/O future (after its first poll, on the I/O thread) reaches the task that
/// touches it, and `run` re-raises the original payload; the pool stays usable.
fn panics_propagate<S: FutureForkJoin>() {
    let pool = S::start(&PoolConfig::with_workers(2)).unwrap();
    let toucher_saw = pool.run(|w| {
        panic::catch_unwind(AssertUnwindSafe(|| {
            w.scope(|s, w| {
                let h = w.latency_future(s, || async {
                    sleep(ms(5)).await;
                    panic!("io failed");
                });
                let _: u32 = h.get(w);
            })
        }))
        .is_err()
    });
    assert!(toucher_saw, "{}: the touch did not panic", S::NAME);
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.run(|w| {
            w.scope(|s, w| {
                let h = w.latency_future(s, || async {
                    sleep(ms(5)).await;
                    panic!("io failed");
                });
                let _: u32 = h.get(w);
            })
        })
    }));
    let p = r.expect_err("run did not panic");
    assert_eq!(p.downcast_ref::<&str>(), Some(&"io failed"), "{}", S::NAME);
    // A panic at the first poll, and one in a future nobody touches.
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.run(|w| {
            w.scope(|s, w| {
                let _ = w.latency_future(s, || async {
                    sleep(ms(2)).await;
                    panic!("untouched");
                });
                let _ = w.latency_future(s, || async { panic!("at once") });
            })
        })
    }));
    assert!(r.is_err(), "{}", S::NAME);
    assert_eq!(pool.run(|w| items(w, 0, 4, ms(1), Duration::ZERO)), 6);
}

#[test]
fn panics_in_io_futures_propagate() {
    panics_propagate::<Prows>();
    panics_propagate::<Abp>();
}

/// A wait on a socket (a Unix stream pair on the pool's reactor): the reader is a latency
/// future, the writer a task that writes after 10 ms of work.
#[test]
fn a_socket_wait_is_hidden_too() {
    fn run<S: FutureForkJoin>() {
        let pool = S::start(&PoolConfig::with_workers(2)).unwrap();
        let got = pool.run(|w| {
            w.scope(|s, w| {
                let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
                a.set_nonblocking(true).unwrap();
                b.set_nonblocking(true).unwrap();
                let reader = w.latency_future(s, move || async move {
                    let a = ::tokio::net::UnixStream::from_std(a).unwrap();
                    let mut buf = [0u8; 5];
                    let mut n = 0;
                    while n < buf.len() {
                        a.readable().await.unwrap();
                        match a.try_read(&mut buf[n..]) {
                            Ok(k) => n += k,
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                            Err(e) => panic!("{e}"),
                        }
                    }
                    buf
                });
                let writer = w.latency_future(s, move || async move {
                    let b = ::tokio::net::UnixStream::from_std(b).unwrap();
                    sleep(ms(10)).await;
                    b.writable().await.unwrap();
                    assert_eq!(b.try_write(b"hello").unwrap(), 5);
                });
                writer.get(w);
                reader.get(w)
            })
        });
        assert_eq!(&got, b"hello", "{}", S::NAME);
    }
    run::<Prows>();
    run::<Abp>();
}

/// Dropping a pool whose I/O thread has waits in flight (detached timers a latency future
/// spawned on the pool's runtime, and the bookkeeping of puts that just happened) returns at
/// once and frees every value exactly once; nothing hangs.
#[test]
fn pools_shut_down_with_waits_in_flight() {
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    fn run<S: FutureForkJoin>() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut made = 0;
        for round in 0..20u64 {
            let pool = S::start(&PoolConfig::with_workers(2)).unwrap();
            let d = Arc::clone(&drops);
            let n = pool.run(|w| {
                w.scope(|s, w| {
                    let hs: Vec<_> = (0..8u64)
                        .map(|i| {
                            let d = Arc::clone(&d);
                            w.latency_future(s, move || {
                                // A wait that outlives the run, detached on the pool's runtime.
                                ::tokio::spawn(async {
                                    sleep(Duration::from_secs(3600)).await;
                                });
                                async move {
                                    sleep(Duration::from_micros((round * 7 + i) % 1500)).await;
                                    Counted(d)
                                }
                            })
                        })
                        .collect();
                    // Half are touched, half dropped untouched (their values with the handle).
                    hs.into_iter()
                        .enumerate()
                        .filter(|(i, _)| i % 2 == 0)
                        .count()
                })
            });
            assert_eq!(n, 4);
            made += 8;
            let t = Instant::now();
            drop(pool);
            assert!(
                t.elapsed() < Duration::from_secs(2),
                "{}: drop took {:?}",
                S::NAME,
                t.elapsed()
            );
        }
        assert_eq!(drops.load(Ordering::Relaxed), made, "{}", S::NAME);
    }
    run::<Prows>();
    run::<Abp>();
}

/// The async front-end: tokio awaits natively (hiding), `serial/front=async` blocks; same values.
#[test]
fn async_front_end_latency() {
    // Recursive: `+ Send` must be written out (see `AsyncForkJoin`).
    #[allow(clippy::manual_async_fn)]
    fn items_async<'s, C: AsyncWorker<'s>>(
        c: C,
        lo: u64,
        hi: u64,
    ) -> impl std::future::Future<Output = u64> + Send + 's {
        async move {
            if hi - lo == 1 {
                return c
                    .latency_future(move || async move {
                        sleep(ms(20)).await;
                        lo
                    })
                    .await;
            }
            let mid = lo + (hi - lo) / 2;
            let (a, b) = c
                .join(
                    move |c| items_async(c, lo, mid),
                    move |c| items_async(c, mid, hi),
                )
                .await;
            a + b
        }
    }
    let tokio = TokioPool::start(&PoolConfig::with_workers(2)).unwrap();
    let t = Instant::now();
    assert_eq!(tokio.run_async(|c| items_async(c, 0, 20)), 190);
    assert!(
        t.elapsed() < ms(150),
        "tokio did not hide: {:?}",
        t.elapsed()
    );
    let serial = Serial::start(&PoolConfig::with_workers(1)).unwrap();
    assert_eq!(serial.run_async(|c| items_async(c, 0, 3)), 3);
}

/// Touches consume the value the future returned, even a value borrowed from the scope's
/// caller.
#[test]
fn values_may_borrow_from_outside_the_scope() {
    let pool = Prows::start(&PoolConfig::with_workers(2)).unwrap();
    let words = vec!["a".to_string(), "b".to_string()];
    let got = pool.run(|w| {
        w.scope(|s, w| {
            let ws = &words;
            let h = w.latency_future(s, move || async move {
                sleep(ms(2)).await;
                &ws[1]
            });
            h.get(w).clone()
        })
    });
    assert_eq!(got, "b");
}
