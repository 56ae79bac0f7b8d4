//! The cost of the C ABI boundary under the oneTBB and OpenMP baselines: `fib` written
//! directly in C++ on each library against the same `fib` written in Rust on the safe
//! wrappers of `stealbench_schedulers::{tbb, openmp}::ffi`, every fork crossing the boundary
//! (a trampoline per task, `catch_unwind` around each closure, the closures and their outcomes
//! in slots on the Rust stack).
//!
//! - `native`: `sb_tbb_fib_native` / `sb_omp_fib_native`: the join pattern of the shim in C++
//!   (oneTBB: one `task_group` per call, `fib(n-2)` run on it, `fib(n-1)` inline, `wait`;
//!   OpenMP: `fib(n-1)` an untied task, `fib(n-2)` inline, `taskwait`), no Rust in the loop;
//! - `rust`: `join(|| fib(n-1), || fib(n-2))` on `tbb::ffi::join` / `openmp::ffi::join`, run in
//!   the arena (`TbbArena::execute`) or the region (`openmp::ffi::run`).
//!
//! For each library and P = 1, 2: T_P/T_s of both (T_s: `workloads::fib::serial`), and
//! rust/native, the boundary's factor.
//!
//! `cargo run --release -p stealbench-workloads --features tbb,openmp --example baseline_floor
//! [n] [reps]` (defaults 32 and 5; every figure is the best of `reps` runs, and every answer is
//! checked).

mod common;

use common::best;
use std::hint::black_box;
use stealbench_schedulers::openmp::ffi as omp;
use stealbench_schedulers::tbb::ffi::{self as tbb, TbbArena};
use stealbench_workloads::fib::{expected, serial};

fn fib_tbb(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = tbb::join(|| fib_tbb(n - 1), || fib_tbb(n - 2));
    a + b
}

fn fib_omp(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = omp::join(|| fib_omp(n - 1), || fib_omp(n - 2));
    a + b
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(32, |s| s.parse().expect("n"));
    let reps: usize = args.next().map_or(5, |s| s.parse().expect("reps"));
    let want = expected(n);
    let ts = best(reps, want, || serial(black_box(n)));
    println!("fib({n}), best of {reps}: T_s = {ts:.4} s");
    println!(
        "{:>8} {:>3} {:>10} {:>10} {:>14} {:>14} {:>12}",
        "library", "P", "native s", "rust s", "native T_P/T_s", "rust T_P/T_s", "rust/native"
    );
    let row = |lib: &str, p: usize, native: f64, rust: f64| {
        println!(
            "{lib:>8} {p:>3} {native:>10.4} {rust:>10.4} {:>14.2} {:>14.2} {:>12.2}",
            native / ts,
            rust / ts,
            rust / native
        );
    };
    for p in [1, 2] {
        let arena = TbbArena::new(p).expect("oneTBB arena");
        let native = best(reps, want, || arena.fib_native(black_box(n)));
        let rust = best(reps, want, || arena.execute(|| fib_tbb(black_box(n))));
        row("tbb", p, native, rust);
    }
    for p in [1, 2] {
        let native = best(reps, want, || omp::fib_native(p, black_box(n)));
        let rust = best(reps, want, || {
            let (v, team) = omp::run(p, || fib_omp(black_box(n)));
            assert_eq!(team, p, "the team's size");
            v
        });
        row("openmp", p, native, rust);
    }
}
