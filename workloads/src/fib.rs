//! `fib`: recursive Fibonacci without base-case coarsening (ProWS Figure 3, libfork, Fibril).
//! Almost all of its time is the runtime's fork or future-creation overhead.
//!
//! Variants: `fj` (join) and `sf` (a structured future per call). The ProWS paper's "-stack"
//! row of Figure 3 is `sf` on a pool started with
//! [`FutureStack::Current`](stealbench_schedulers::FutureStack::Current) (the arm
//! `prows/futures=nostack`), so no future gets a stack of its own (only the fiber runtimes
//! offer that choice): a setting of the runtime, not of the program.

use crate::{Checked, Params, Shape, Size, Variant, Workload};
use std::future::Future;
use stealbench_schedulers::{
    AsyncForkJoin, AsyncWorker, ForkJoin, FutureForkJoin, FutureHandle, Futures, Worker,
};

/// The workload marker type.
#[derive(Debug)]
pub struct Fib;

/// The kernel: the serial recursion, also the serial elision of every variant.
pub fn serial(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    serial(n - 1) + serial(n - 2)
}

/// The kernel in the shape of libfork's serial benchmark (`bench/source/fib/serial.cpp`),
/// which the libfork paper's T_s times: never inlined, the result written through an
/// out-parameter rather than returned. Each call is a real call that stores its result to
/// memory, which makes it slower than [`serial`] (the compiler may inline and merge the plain
/// recursion's calls).
#[inline(never)]
pub fn serial_out(ret: &mut u64, n: u64) {
    if n < 2 {
        *ret = n;
        return;
    }
    let (mut a, mut b) = (0, 0);
    serial_out(&mut a, n - 1);
    serial_out(&mut b, n - 2);
    *ret = a + b;
}

/// The largest `n` whose `fib(n)` fits a `u64`.
pub const MAX_N: u64 = 93;

/// The known value, by iteration.
pub fn expected(n: u64) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        // `b` runs one term ahead: at n = MAX_N it is fib(94), which wraps and is never read.
        (a, b) = (b, a.wrapping_add(b));
    }
    a
}

/// Fork-join: `join(fib(n-1), fib(n-2))`.
pub fn fj<W: Worker>(w: &W, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = w.join(|w| fj(w, n - 1), |w| fj(w, n - 2));
    a + b
}

/// Structured futures: `x = fut-create fib(n-1); y = fib(n-2); get(x) + y`.
pub fn sf<W: Futures>(w: &W, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    w.scope(|s, w| {
        let x = w.future(s, move |_, w| sf(w, n - 1));
        let y = sf(w, n - 2);
        x.get(w) + y
    })
}

/// Fork-join on the async front-end: fork `fib(n-1)`, call `fib(n-2)`, join.
pub fn fj_async<'s, C: AsyncWorker<'s>>(c: C, n: u64) -> impl Future<Output = u64> + Send + 's {
    async move {
        if n < 2 {
            return n;
        }
        let (a, b) = c
            .join(move |c| fj_async(c, n - 1), move |c| fj_async(c, n - 2))
            .await;
        a + b
    }
}

/// Structured futures on the async front-end: `x = fut-create fib(n-1); y = fib(n-2)` (a
/// call), then the one touch of `x`.
pub fn sf_async<'s, C: AsyncWorker<'s>>(c: C, n: u64) -> impl Future<Output = u64> + Send + 's {
    async move {
        if n < 2 {
            return n;
        }
        let x = c.spawn(move |c| sf_async(c, n - 1)).await;
        let y = c.call(move |c| sf_async(c, n - 2)).await;
        x.await + y
    }
}

impl Workload for Fib {
    const NAME: &'static str = "fib";
    const DESCRIPTION: &'static str =
        "recursive Fibonacci, no base-case coarsening (spawn overhead)";
    const VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Sf];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Sf];

    type Input = u64;
    type Work = ();
    type Answer = u64;

    fn preset(size: Size) -> Params {
        let n = match size {
            Size::Paper => 42,
            Size::Small => 36,
            Size::Quick => 32,
            Size::Test => 20,
        };
        Params::new().int("n", n)
    }

    fn input(params: &Params) -> Result<u64, String> {
        match params.get_int("n") {
            n @ 0..=MAX_N => Ok(n),
            n => Err(format!("n={n}: fib(n) fits 64 bits only up to n={MAX_N}")),
        }
    }

    fn prepare(_input: &u64) {}

    fn run<S: ForkJoin>(pool: &S, variant: Variant, n: &u64, _work: &mut ()) -> u64 {
        let n = *n;
        match variant {
            Variant::Fj => pool.run(|w| fj(w, n)),
            v => crate::not_without_futures::<Self>(v),
        }
    }

    fn run_futures<S: FutureForkJoin>(pool: &S, variant: Variant, n: &u64, work: &mut ()) -> u64 {
        match variant {
            Variant::Sf => pool.run(|w| sf(w, *n)),
            v => Self::run(pool, v, n, work),
        }
    }

    fn run_async<S: AsyncForkJoin>(pool: &S, variant: Variant, n: &u64, _work: &mut ()) -> u64 {
        let n = *n;
        match variant {
            Variant::Fj => pool.run_async(|c| fj_async(c, n)),
            Variant::Sf => pool.run_async(|c| sf_async(c, n)),
            v => panic!("fib has no async {v} variant"),
        }
    }

    fn kernel(n: &u64, _work: &mut ()) -> u64 {
        serial(*n)
    }

    fn kernel_shaped(shape: Shape, n: &u64, work: &mut ()) -> u64 {
        match shape {
            Shape::Plain => Self::kernel(n, work),
            Shape::Libfork => {
                let mut ret = 0;
                serial_out(&mut ret, *n);
                ret
            }
        }
    }

    fn check(n: &u64, _work: &(), answer: &u64) -> Result<Checked, String> {
        let want = expected(*n);
        if *answer == want {
            Ok(Checked::new(
                format!("fib({n}) = {answer}"),
                "the iterative fib(n)",
            ))
        } else {
            Err(format!("fib({n}) = {answer}, expected {want}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_matches_known_values() {
        assert_eq!(serial(20), 6765);
        assert_eq!(expected(42), 267_914_296);
        assert_eq!(expected(20), serial(20));
        let mut ret = 0;
        serial_out(&mut ret, 20);
        assert_eq!(ret, 6765);
    }

    #[test]
    fn check_rejects_a_wrong_answer() {
        let n = Fib::input_at(Size::Test);
        assert_eq!(
            Fib::check(&n, &(), &expected(n)).unwrap().to_string(),
            "fib(20) = 6765; checked against the iterative fib(n)"
        );
        assert!(Fib::check(&n, &(), &1).is_err());
    }

    #[test]
    fn inputs_past_64_bits_are_refused() {
        assert_eq!(expected(MAX_N), 12_200_160_415_121_876_738);
        let p = |n: &str| {
            Fib::preset(Size::Test)
                .apply(&[("n".into(), n.into())])
                .unwrap()
        };
        assert_eq!(Fib::input(&p("93")), Ok(93));
        assert!(Fib::input(&p("94")).unwrap_err().contains("n=94"));
    }
}
