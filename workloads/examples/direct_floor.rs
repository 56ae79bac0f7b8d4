//! Whether each Rust baseline runs at its own speed behind the `Scheduler` traits: `fib` written
//! directly on the library, as its users write it, against the workload's own `fib` (`fj` on
//! the closure front-end, `fj_async` on the async one) run through stealbench's runtime of that
//! library, at P = 1 and 2.
//!
//! - `rayon`: `rayon::join` in a pool of P threads (`ThreadPool::install`), against `rayon`;
//! - `chili`: `chili::Scope::join` in a pool of P threads, its sides in the order that gives
//!   the trait's schedule (`fib(n-1)` inline, `fib(n-2)` offered to thieves), against `chili`;
//! - `tokio`: `tokio::spawn` of `fib(n-1)`, `fib(n-2)` awaited in a box, then the join handle,
//!   on a multi-thread runtime of P workers, against `tokio`;
//! - `tokio-floor`: that direct tokio fib against itself with the one step the async
//!   front-end cannot leave out, a count of unfinished tasks shared by the scope (every spawn
//!   enters it, every task leaves it as it ends: how `run_async` knows that no task borrowing
//!   from its caller is left). Its ratio is the floor under `tokio`'s.
//!
//! The configurations run in alternating rounds (these VMs move up to 2x between processes and
//! drift within one), each round a median of `reps` checked runs; every figure printed is the
//! median over the rounds, and `via/direct` is the median of each round's own ratio. T_s is
//! `workloads::fib::serial`. The program allocates with jemalloc, as the `stealbench` binary does
//! (tokio's fib spends about half its time allocating and freeing tasks, so a comparison with
//! `stealbench run` holds only on the same allocator). The oneTBB and OpenMP baselines have their own program
//! (`baseline_floor`), as their direct code is C++.
//!
//! `cargo run --release -p stealbench-workloads --example direct_floor [n] [reps] [rounds]
//! [tokio_n] [libraries]` (defaults 35, 7, 5, 30 and `rayon,chili,tokio`: a task per call
//! makes tokio's fib(35) take seconds a run, and fib(30)'s 1.3 million spawns measure the same
//! cost per task; `libraries` picks the pairs run, `tokio-floor` among them).

#![allow(clippy::manual_async_fn)]

mod common;

use common::{median, timed};
use std::future::Future;
use std::hint::black_box;
use std::num::NonZero;
use std::pin::Pin;
use stealbench_schedulers::chili::ChiliPool;
use stealbench_schedulers::rayon::RayonPool;
use stealbench_schedulers::tokio::TokioPool;
use stealbench_schedulers::{AsyncForkJoin, ForkJoin, PoolConfig, Scheduler};
use stealbench_workloads::fib::{expected, fj, fj_async, serial};

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn fib_rayon(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayon::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
    a + b
}

fn fib_chili(s: &mut chili::Scope<'_>, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    // chili runs its second closure inline and offers the first to thieves: fib(n-1) inline
    // and fib(n-2) offered, the schedule of `fj` through the trait (and of `rayon::join`).
    let (b, a) = s.join(|s| fib_chili(s, n - 2), |s| fib_chili(s, n - 1));
    a + b
}

fn fib_tokio(n: u64) -> Pin<Box<dyn Future<Output = u64> + Send>> {
    Box::pin(async move {
        if n < 2 {
            return n;
        }
        let a = tokio::spawn(fib_tokio(n - 1));
        let b = fib_tokio(n - 2).await;
        a.await.expect("fib task") + b
    })
}

/// The tasks of `fib_tokio_counted` that have not finished: the count a scope of borrowing
/// tasks must keep (the one step the async front-end cannot leave out).
static PENDING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// `fib_tokio` with the scope's count: every spawn enters it and every task leaves it as it
/// ends, as `run_async` needs to know when its tasks are done.
fn fib_tokio_counted(n: u64) -> Pin<Box<dyn Future<Output = u64> + Send>> {
    use std::sync::atomic::Ordering::SeqCst;
    Box::pin(async move {
        if n < 2 {
            return n;
        }
        PENDING.fetch_add(1, SeqCst);
        let a = tokio::spawn(async move {
            let v = fib_tokio_counted(n - 1).await;
            PENDING.fetch_sub(1, SeqCst);
            v
        });
        let b = fib_tokio_counted(n - 2).await;
        a.await.expect("fib task") + b
    })
}

/// The median wall time of `reps` runs of `f`, each checked against `want`.
fn median_time(reps: usize, want: u64, mut f: impl FnMut() -> u64) -> f64 {
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let (v, s) = timed(&mut f);
            assert_eq!(v, want, "wrong answer");
            s
        })
        .collect();
    median(&mut times)
}

/// One library at one P: the direct and the through-stealbench runs, timed alternately.
struct Pair<'a> {
    name: String,
    /// fib's value at this pair's n.
    want: u64,
    /// T_s at this pair's n.
    ts: f64,
    direct: Box<dyn FnMut() -> u64 + 'a>,
    via: Box<dyn FnMut() -> u64 + 'a>,
    direct_s: Vec<f64>,
    via_s: Vec<f64>,
}

impl<'a> Pair<'a> {
    /// A pair named `name`, whose runs compute `want`.
    fn new(
        name: String,
        want: u64,
        direct: impl FnMut() -> u64 + 'a,
        via: impl FnMut() -> u64 + 'a,
    ) -> Self {
        Pair {
            name,
            want,
            ts: 0.0,
            direct: Box::new(direct),
            via: Box::new(via),
            direct_s: Vec::new(),
            via_s: Vec::new(),
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(35, |s| s.parse().expect("n"));
    let reps: usize = args.next().map_or(7, |s| s.parse().expect("reps"));
    let rounds: usize = args.next().map_or(5, |s| s.parse().expect("rounds"));
    let tokio_n: u64 = args.next().map_or(30, |s| s.parse().expect("tokio_n"));
    let libraries = args
        .next()
        .unwrap_or_else(|| "rayon,chili,tokio".to_string());
    let runs = |library: &str| libraries.split(',').any(|l| l == library);
    let want = expected(n);

    let config = |p: usize| PoolConfig::with_workers(p);
    let threads = |p: usize| NonZero::new(p).expect("P > 0");
    let tokio_runtime = |p: usize| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(p)
            .build()
            .expect("tokio runtime")
    };
    let mut pairs: Vec<Pair<'_>> = Vec::new();
    for p in [1, 2] {
        if runs("rayon") {
            let direct = rayon::ThreadPoolBuilder::new()
                .num_threads(p)
                .build()
                .expect("rayon pool");
            let via = RayonPool::start(&config(p)).expect("rayon");
            pairs.push(Pair::new(
                format!("rayon P={p}"),
                want,
                move || direct.install(|| fib_rayon(black_box(n))),
                move || via.run(|w| fj(w, black_box(n))),
            ));
        }
        if runs("chili") {
            let direct = chili::ThreadPool::with_config(chili::Config {
                thread_count: Some(threads(p)),
                ..chili::Config::default()
            });
            let via = ChiliPool::start(&config(p)).expect("chili");
            pairs.push(Pair::new(
                format!("chili P={p}"),
                want,
                move || fib_chili(&mut direct.scope(), black_box(n)),
                move || via.run(|w| fj(w, black_box(n))),
            ));
        }
        if runs("tokio") {
            let direct = tokio_runtime(p);
            let via = TokioPool::start(&config(p)).expect("tokio");
            pairs.push(Pair::new(
                format!("tokio P={p}"),
                expected(tokio_n),
                move || direct.block_on(fib_tokio(black_box(tokio_n))),
                move || via.run_async(|c| fj_async(c, black_box(tokio_n))),
            ));
        }
        if runs("tokio-floor") {
            let direct = tokio_runtime(p);
            let counted = tokio_runtime(p);
            pairs.push(Pair::new(
                format!("tokio-floor P={p}"),
                expected(tokio_n),
                move || direct.block_on(fib_tokio(black_box(tokio_n))),
                move || counted.block_on(fib_tokio_counted(black_box(tokio_n))),
            ));
        }
    }

    let mut ts: Vec<(u64, Vec<f64>)> = vec![(n, Vec::new()), (tokio_n, Vec::new())];
    for round in 0..rounds {
        for (m, times) in &mut ts {
            let m = *m;
            times.push(median_time(reps, expected(m), || serial(black_box(m))));
        }
        for pair in &mut pairs {
            // Alternate which of the two goes first, round by round.
            let want = pair.want;
            if round % 2 == 0 {
                pair.direct_s
                    .push(median_time(reps, want, &mut pair.direct));
                pair.via_s.push(median_time(reps, want, &mut pair.via));
            } else {
                pair.via_s.push(median_time(reps, want, &mut pair.via));
                pair.direct_s
                    .push(median_time(reps, want, &mut pair.direct));
            }
        }
    }
    let ts: Vec<(u64, f64)> = ts
        .into_iter()
        .map(|(m, mut t)| (m, median(&mut t)))
        .collect();
    for pair in &mut pairs {
        let m = if pair.want == want { n } else { tokio_n };
        pair.ts = ts
            .iter()
            .find(|(k, _)| *k == m)
            .map_or(f64::NAN, |(_, t)| *t);
    }
    println!(
        "fib({n}) (tokio: fib({tokio_n})), {rounds} alternating rounds, each a median of {reps}: \
         T_s = {:.4} s and {:.4} s (fib::serial)",
        ts[0].1, ts[1].1
    );
    println!(
        "{:>12} {:>10} {:>10} {:>14} {:>14} {:>11}",
        "library", "direct s", "via s", "direct T/T_s", "via T/T_s", "via/direct"
    );
    for pair in &pairs {
        let mut ratios: Vec<f64> = pair
            .via_s
            .iter()
            .zip(&pair.direct_s)
            .map(|(v, d)| v / d)
            .collect();
        let ratio = median(&mut ratios);
        let (d, v) = (
            median(&mut pair.direct_s.clone()),
            median(&mut pair.via_s.clone()),
        );
        println!(
            "{:>12} {d:>10.4} {v:>10.4} {:>14.2} {:>14.2} {ratio:>11.3}",
            pair.name,
            d / pair.ts,
            v / pair.ts
        );
    }
}
