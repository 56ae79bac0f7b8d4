//! The cost of the `Worker` trait's serial elision against the plain kernel, for every
//! workload: T_s is the kernel ([`Workload::kernel`], the serial code with no runtime and no
//! trait), and the `serial` runtime runs the same program through the closure front-end (its
//! `join` runs one side then the other, a future runs where it is created). The elision's
//! cost over T_s is what the front-end's shape adds when nothing is ever stolen.
//!
//! For each workload at the given size (or those named after the rounds), the input is made
//! once (untimed) and each program runs once untimed (the warm-up); then, `rounds` times, the
//! elision (T_s's variant, `fj` where the workload has it, on the `serial` pool) and the
//! kernel run alternately, each on fresh work ([`Workload::prepare`], untimed) and each
//! answer checked ([`Workload::check`], untimed). A VM's speed moves between moments, so
//! each round's ratio compares two runs made side by side; the line gives the median of the
//! rounds' elision / kernel and their range. fib also shows libfork's serial shape
//! ([`Shape::Libfork`]) over the plain kernel.
//!
//! `cargo run --release -p stealbench-workloads --example elision_floor [size] [rounds]
//! [workload...]` (defaults `quick`, 5 and every workload).

mod common;

use common::{median, timed};
use std::hint::black_box;
use stealbench_schedulers::serial::Serial;
use stealbench_schedulers::{PoolConfig, Scheduler};
use stealbench_workloads::{Shape, Size, Variant, Workload, all, with_workload};

/// One timed run of `f` on fresh work, its answer checked.
fn checked<W: Workload>(
    input: &W::Input,
    what: &str,
    f: impl FnOnce(&W::Input, &mut W::Work) -> W::Answer,
) -> f64 {
    let mut work = W::prepare(input);
    let (answer, s) = timed(|| black_box(f(black_box(input), &mut work)));
    if let Err(e) = W::check(input, &work, &answer) {
        panic!("{} {what}: {e}", W::NAME);
    }
    s
}

/// The rounds' times of `a` and `b` run alternately (`a` first), each checked.
type Runner<'a, W> =
    &'a dyn Fn(&<W as Workload>::Input, &mut <W as Workload>::Work) -> <W as Workload>::Answer;

fn alternate<W: Workload>(
    input: &W::Input,
    rounds: usize,
    a: (&str, Runner<'_, W>),
    b: (&str, Runner<'_, W>),
) -> (Vec<f64>, Vec<f64>) {
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    // The warm-up: each program once, checked, untimed.
    checked::<W>(input, a.0, a.1);
    checked::<W>(input, b.0, b.1);
    for _ in 0..rounds {
        ta.push(checked::<W>(input, a.0, a.1));
        tb.push(checked::<W>(input, b.0, b.1));
    }
    (ta, tb)
}

/// Prints one line: the medians of both, and the median and range of the rounds' ratios
/// `a / b`.
fn line(name: &str, what: &str, ta: &[f64], tb: &[f64]) {
    let mut ratios: Vec<f64> = ta.iter().zip(tb).map(|(a, b)| a / b).collect();
    let (lo, hi) = (
        ratios.iter().copied().fold(f64::INFINITY, f64::min),
        ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    println!(
        "{name:<14} {what:<22} {:>11.5} {:>11.5} {:>8.3} {:>13}",
        median(&mut ta.to_vec()),
        median(&mut tb.to_vec()),
        median(&mut ratios),
        format!("{lo:.3}-{hi:.3}")
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let size: Size = args
        .next()
        .map_or(Ok(Size::Quick), |s| s.parse())
        .unwrap_or_else(|e| panic!("{e}"));
    let rounds: usize = args.next().map_or(5, |s| s.parse().expect("rounds"));
    assert!(rounds > 0, "at least one round");
    let only: Vec<String> = args.collect();
    let pool = Serial::start(&PoolConfig::with_workers(1)).expect("the serial pool");
    println!(
        "size {size}, {rounds} alternating rounds; times are the medians over the rounds, in \
         seconds; ratio: the median of the rounds' ratios, and their range"
    );
    println!(
        "{:<14} {:<22} {:>11} {:>11} {:>8} {:>13}",
        "workload", "a / b", "a (s)", "b (s)", "a/b", "range"
    );
    for info in all()
        .into_iter()
        .filter(|w| only.is_empty() || only.iter().any(|o| o == w.name))
    {
        with_workload!(info.name, W => {
            let input = W::input_at(size);
            let v = if W::VARIANTS.contains(&Variant::Fj) {
                Variant::Fj
            } else {
                W::VARIANTS[0]
            };
            let elision: Runner<'_, W> = &|i, w| W::run_futures(&pool, v, i, w);
            let kernel: Runner<'_, W> = &|i, w| W::kernel(i, w);
            let (te, tk) =
                alternate::<W>(&input, rounds, ("elision", elision), ("kernel", kernel));
            line(W::NAME, &format!("serial {v} / kernel"), &te, &tk);
            if W::NAME == "fib" {
                let shaped: Runner<'_, W> = &|i, w| W::kernel_shaped(Shape::Libfork, i, w);
                let (ts, tk) =
                    alternate::<W>(&input, rounds, ("libfork shape", shaped), ("kernel", kernel));
                line(W::NAME, "libfork shape / kernel", &ts, &tk);
            }
        })
        .expect("a listed workload");
    }
}
