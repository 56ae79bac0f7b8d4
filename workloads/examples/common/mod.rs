//! What the examples share: a timed call, a median, and the best-of timing of fib, every run
//! checked.
//! Each example compiles this module and uses part of it.
#![allow(dead_code)]

use std::time::Instant;

/// `f`'s value and its wall time in seconds.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed().as_secs_f64())
}

/// The median of `xs` (sorted in place); `xs` is not empty.
pub fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[m]
    } else {
        (xs[m - 1] + xs[m]) / 2.0
    }
}

/// The best wall time of `reps` runs of `f`, each checked against the known value `want`.
pub fn best(reps: usize, want: u64, mut f: impl FnMut() -> u64) -> f64 {
    (0..reps)
        .map(|_| {
            let (v, s) = timed(&mut f);
            assert_eq!(v, want, "wrong answer");
            s
        })
        .fold(f64::INFINITY, f64::min)
}
