//! fib on the closure front-end, the tests' smallest program with forks or futures at every
//! level: `join(fib(n-1), fib(n-2))`, and a structured future per call.

use stealbench_schedulers::{FutureHandle, Futures, Worker};

/// Fork-join fib.
pub fn fib_fj<W: Worker>(w: &W, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = w.join(|w| fib_fj(w, n - 1), |w| fib_fj(w, n - 2));
    a + b
}

/// fib with a structured future per call: `x = fut-create fib(n-1); y = fib(n-2); get(x) + y`.
pub fn fib_sf<W: Futures>(w: &W, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    w.scope(|s, w| {
        let x = w.future(s, move |_, w| fib_sf(w, n - 1));
        let y = fib_sf(w, n - 2);
        x.get(w) + y
    })
}
