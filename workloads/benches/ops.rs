//! The cost of one scheduler operation, per runtime, with criterion (`cargo bench -p
//! stealbench-workloads`): one fiber switch round trip, one deque push and pop, one join, one
//! future, one stackless fork. A join, a future or a fork is timed as fib(20) (10,945 of them,
//! fib's own work included) and reported per operation (criterion's throughput: elements are
//! forks). P = 1 throughout: the cost of the operation, not of stealing.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;
use stealbench_schedulers::abp::Abp;
use stealbench_schedulers::deque;
use stealbench_schedulers::fiber::{prepare, switch};
use stealbench_schedulers::fibril::Fibril;
use stealbench_schedulers::libfork::LibforkPool;
use stealbench_schedulers::prows::Prows;
use stealbench_schedulers::rayon::RayonPool;
use stealbench_schedulers::serial::Serial;
use stealbench_schedulers::stack::Stack;
use stealbench_schedulers::tokio::TokioPool;
use stealbench_schedulers::{AsyncForkJoin, FutureForkJoin, PoolConfig};
use stealbench_workloads::fib;

/// fib's argument: 10,945 joins (or futures, or forks) a run.
const N: u64 = 20;
/// The joins of fib(N): fib(N + 1) - 1.
const FORKS: u64 = 10_945;

/// Both saved contexts of the switch benchmark, at a stable address.
struct Pair {
    parent: usize,
    child: usize,
}

/// The child context: switches straight back to the parent each time it is continued.
unsafe extern "C" fn bounce(_: usize, pair: usize) -> ! {
    let p = pair as *mut Pair;
    loop {
        // SAFETY: the parent saved itself in `parent` when it switched to us.
        unsafe { switch(0, (*p).parent, &raw mut (*p).child) };
    }
}

/// A parent switching to a child context and the child straight back (two switches), as a
/// future's fast path does.
fn fiber_switch(c: &mut Criterion) {
    let stack = Stack::new(64 * 1024).expect("map a stack");
    let mut pair = Box::new(Pair {
        parent: 0,
        child: 0,
    });
    let p = &mut *pair as *mut Pair;
    // SAFETY: the stack is the child's alone; the child never returns.
    pair.child = unsafe { prepare(&stack, bounce, p as usize) };
    c.bench_function("fiber switch round trip", |b| {
        // SAFETY: the child is suspended and only we continue it; it switches back here.
        b.iter(|| unsafe { switch(0, (*p).child, &raw mut (*p).parent) })
    });
}

/// The owner's push and pop of one entry on the runtimes' Chase-Lev deque.
fn deque_push_pop(c: &mut Criterion) {
    let (owner, _thief) = deque::new(64);
    c.bench_function("deque push + pop", |b| {
        b.iter(|| {
            owner.push(black_box([1, 2]));
            black_box(owner.pop())
        })
    });
}

/// One join (fj) and one future (sf) per closure runtime.
fn closure_ops(c: &mut Criterion) {
    fn one<S: FutureForkJoin>(c: &mut Criterion, name: &str) {
        let pool = S::start(&PoolConfig::with_workers(1)).expect("pool");
        let want = fib::expected(N);
        let mut g = c.benchmark_group("join (fib fj, per join)");
        g.throughput(Throughput::Elements(FORKS));
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| assert_eq!(pool.run(|w| fib::fj(w, black_box(N))), want))
        });
        g.finish();
        let mut g = c.benchmark_group("future (fib sf, per future)");
        g.throughput(Throughput::Elements(FORKS));
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| assert_eq!(pool.run(|w| fib::sf(w, black_box(N))), want))
        });
        g.finish();
    }
    one::<Serial>(c, "serial");
    one::<RayonPool>(c, "rayon");
    one::<Abp>(c, "abp");
    one::<Fibril>(c, "fibril");
    one::<Prows>(c, "prows");
}

/// One fork on the async front-end (fork, call, join) per async runtime.
fn async_ops(c: &mut Criterion) {
    fn one<S: AsyncForkJoin>(c: &mut Criterion, name: &str) {
        let pool = S::start(&PoolConfig::with_workers(1)).expect("pool");
        let want = fib::expected(N);
        let mut g = c.benchmark_group("stackless fork (fib fj async, per fork)");
        g.throughput(Throughput::Elements(FORKS));
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| assert_eq!(pool.run_async(|w| fib::fj_async(w, black_box(N))), want))
        });
        g.finish();
    }
    one::<Serial>(c, "serial/front=async");
    one::<LibforkPool>(c, "libfork");
    one::<TokioPool>(c, "tokio");
}

/// Short runs: the numbers are per-operation costs of microseconds at most.
fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
}

criterion_group! {
    name = ops;
    config = config();
    targets = fiber_switch, deque_push_pop, closure_ops, async_ops
}
criterion_main!(ops);
